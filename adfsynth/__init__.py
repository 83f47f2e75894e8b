"""Seeded simulators that write synthetic agent files with recorded ground truth.

Used by the tests, the benchmarks and ``make samples``; not part of the adfkit wheel. The
package never imports adfkit: it is a second, independent implementation of the format, so
the ground truth it records checks the reader instead of repeating it.
"""
