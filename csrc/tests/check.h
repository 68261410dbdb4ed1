/*
 * check.h -- the one harness of pybpe's C self-tests (csrc/tests/test_*.c,
 * run by `make ctest` under ASan + UBSan).
 *
 * CHECK(cond) counts a check and, when cond is false, records a failure
 * (file:line and the condition) and goes on, so one run reports every broken
 * check rather than the first.  RUN(test) runs one test function and prints
 * "ok" or "FAILED" beside its name.  Each test program includes this header
 * once; `failures` and `checks` are that program's counters, and its main()
 * returns non-zero when failures is.
 */
#ifndef PYBPE_TESTS_CHECK_H
#define PYBPE_TESTS_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond)                                                          \
    do {                                                                     \
        checks++;                                                            \
        if (!(cond)) {                                                       \
            failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
        }                                                                    \
    } while (0)

#define RUN(test)                                                            \
    do {                                                                     \
        int before = failures;                                               \
        test();                                                              \
        printf("%-32s %s\n", #test, failures == before ? "ok" : "FAILED");   \
    } while (0)

#endif
