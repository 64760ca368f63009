"""Stage 7, report: plans and estimates as files and text a person reads.

``xlsx`` writes the quote workbook (``xlsx_cloud`` its Cloud vs Local sheet), ``export`` the csv
and json, ``render`` the terminal text and Markdown. The only stage that formats sizes and money
for people. Imports the stages before it.
"""
