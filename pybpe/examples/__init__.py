"""Runnable companions to the textbook chapters pybpe follows.

    python -m pybpe.examples.chapter_trace    # TinyTorch Module 10's worked trace

The C book's Chapter 11 listings (061-066) live beside the C core, in
csrc/examples/ (`make demos`); docs/book-map.md maps every listing and
chapter section to the pybpe file, function and test that match it.
"""
