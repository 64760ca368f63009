"""Stage 7, cost: time and money over a machine's life, and renting instead of buying.

``tco`` reads the cost inputs and adds up
the total cost of ownership; ``cloud`` matches workloads to cloud instances; ``compare`` sets a
plan against them (break-even, TCO). Imports the stages before it.
"""
