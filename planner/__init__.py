"""planner: hardware sizing and procurement planner for deep-learning work.

Data flows one way: catalog -> workload -> memory model -> candidates -> solver ->
reports -> CLI. Importing this package does no work.
"""

__version__ = "0.1.0"
