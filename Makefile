# pybpe -- everyday commands.  Each works from a fresh clone with python3 and
# a C compiler: the first run makes a virtual environment in .venv and
# installs pybpe into it (editable, so csrc/ changes need `make build`).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed
CC     ?= cc
CWARN   = -std=c99 -pedantic -Wall -Wextra -Werror
CSRC    = $(wildcard csrc/*.c csrc/py/*.c)

.PHONY: run test bench bench-pretok build ctest sanitize valgrind demos fuzz faults clean

run: $(STAMP)            ## train a tokenizer on the bundled corpus and show it
	$(PY) -m pybpe demo

test: $(STAMP) ctest     ## the whole suite: C self-tests, then pytest on every backend
	$(PY) -m pytest -q tests

bench: $(STAMP)          ## pytest-benchmark: C vs Python (and peers when installed)
	$(PY) -m pytest benchmarks -o python_files='bench_*.py' -p no:cacheprovider \
	    --benchmark-columns=min,median,rounds --benchmark-group-by=group --benchmark-sort=name

# The scanners of csrc/pretok.c alone, no Python: MB/s per pattern on FILES
# (tools/bench_pretok.c says what is measured).
FILES ?= ../shared/data/shakespeare.txt
bench-pretok:
	mkdir -p tools/bin
	$(CC) $(CWARN) -O2 -Icsrc -o tools/bin/bench_pretok tools/bench_pretok.c csrc/pretok.c
	tools/bin/bench_pretok $(FILES)

build: $(STAMP)          ## recompile the C extension in place after editing csrc/
	$(PY) -m pip install -q --no-build-isolation -e .

$(STAMP): pyproject.toml setup.py pybpe/_build.py $(CSRC) $(wildcard csrc/*.h csrc/*.inc csrc/py/*.h csrc/pyext/*.c)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel cffi
	$(PY) -m pip install -q --no-build-isolation -e '.[test]'
	$(PY) -c "import pybpe, sys; b = pybpe.backend(); print('pybpe backend:', b); sys.exit(b != 'c' and not '$(PYBPE_NO_EXTENSION)')"
	touch $@

# C self-tests of the core, warning-clean as C99, under ASan + UBSan.
CTESTS    = test_core test_ranks test_text test_idlists test_pretok_paths
SANFLAGS  = -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
csrc/tests/bin/%: csrc/tests/%.c csrc/tests/check.h $(CSRC) $(wildcard csrc/*.h csrc/*.inc csrc/py/*.h)
	mkdir -p $(dir $@)
	$(CC) $(CWARN) $(SANFLAGS) -Icsrc -o $@ $< $(CSRC)

# test_ranks again as compilers without atomics build it (ranks.c's shared
# batches then take the fixed shares).
csrc/tests/bin/test_ranks_noatomics: csrc/tests/test_ranks.c csrc/tests/check.h $(CSRC) $(wildcard csrc/*.h csrc/*.inc csrc/py/*.h)
	mkdir -p $(dir $@)
	$(CC) $(CWARN) $(SANFLAGS) -DBPE_NO_ATOMICS -Icsrc -o $@ $< $(CSRC)

# test_core and test_ranks again without ASan (UBSan only): ASan builds put
# the rank table's arrays in callocs of their own (arena.c), so these are
# the runs of the huge-page mappings.
csrc/tests/bin/%_mapped: csrc/tests/%.c csrc/tests/check.h $(CSRC) $(wildcard csrc/*.h csrc/*.inc csrc/py/*.h)
	mkdir -p $(dir $@)
	$(CC) $(CWARN) -g -O1 -fsanitize=undefined -fno-sanitize-recover=all -Icsrc -o $@ $< $(CSRC)

ctest: $(addprefix csrc/tests/bin/,$(CTESTS) test_ranks_noatomics test_core_mapped test_ranks_mapped)
	for t in $^; do ASAN_OPTIONS=detect_leaks=1 ./$$t || exit 1; done

# The whole Python suite on a sanitizer build of the extension.
sanitize: $(STAMP)
	tools/sanitize.sh $(PY)

# The C-facing tests under valgrind's memcheck (slow: ~15 minutes); fails on
# any error record that touches pybpe's C code (see tools/valgrind.sh).
valgrind: $(STAMP)
	tools/valgrind.sh $(PY) tests/test_ccore.py tests/test_tokenizer.py tests/test_encoding.py tests/test_decode_paths.py \
	    tests/test_batch_numpy.py \
	    -m "not slow" -k "not every_backend and not python and not hypothesis and not random_batches"

demos:
	$(MAKE) -C csrc/examples run

# Fuzz every target of fuzz/targets.py for FUZZ_SECONDS each: atheris
# (libFuzzer) when it installs here, hypothesis otherwise.  A finding is
# saved under fuzz/findings/ and fails the run.  FUZZ_ARGS: e.g. targets,
# --keep-going, --seed N.
FUZZ_SECONDS ?= 30
fuzz: $(STAMP)
	$(PY) -m pip install -q atheris || echo "atheris did not install here: fuzzing with hypothesis"
	$(PY) fuzz/run.py --seconds $(FUZZ_SECONDS) $(FUZZ_ARGS)

# Fail every allocation the C extension makes, one at a time (tools/faults.py,
# through the LD_PRELOAD shim tools/failalloc.c); each must be a MemoryError
# that leaves the objects working.  FAULTS_ARGS=--quick for the short form.
tools/bin/failalloc.so: tools/failalloc.c
	mkdir -p $(dir $@)
	$(CC) $(CWARN) -O2 -fPIC -shared -o $@ $<

faults: $(STAMP) tools/bin/failalloc.so
	$(PY) tools/faults.py --shim tools/bin/failalloc.so $(FAULTS_ARGS)

clean:
	rm -rf build dist *.egg-info pybpe/_bpe_c.* pybpe/*.so csrc/tests/bin csrc/examples/bin \
	    .pytest_cache .benchmarks .hypothesis tools/bin fuzz/logs
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
