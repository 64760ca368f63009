"""Stage 8, report: plans and estimates as files and text a person reads.

``workbook`` writes the quote workbook, one module per sheet in ``sheets`` (``sheets.cloud`` the
Cloud vs Local sheet of a comparison), from the plain data of ``workbook_data`` that ``from_plan``
reads off a plan; ``cells`` holds the safe cell writers and styles the sheets share, ``copies``
scales a workbook to several copies of the machine. ``export`` writes the csv and json,
``render`` the terminal text and Markdown. The only stage that formats sizes and money
for people. Imports the stages before it.
"""
