"""Stage 6, solve: from workloads to the machine to buy.

``scenario`` reads a scenario file (workloads, constraints, strategies the solver may choose);
``usages`` lists the ways each workload runs (a variant on N GPUs) with its memory estimate;
``hardware`` enumerates GPU x count x platform x nodes x RAM configurations and checks how each is
built (slots, lanes, power, network, RAM); ``candidates`` checks every workload on those rows and
marks each feasible or not, with the reason; ``solver`` picks the cheapest feasible plan and explains misses; ``suggest``
finds, when nothing fits, the reasons and the changes that would fit (each checked with the memory
model); ``warnings`` says what to check before buying the chosen machine; ``quote`` holds the
quote's line items. Imports the stages before it (core, model, catalog, workload, memory, speed).
"""
