"""The workbook's sheets, one module per sheet.

Each module writes one sheet of the plan's workbook into an openpyxl worksheet from
:class:`planner.report.workbook_data.WorkbookData`: ``summary``, ``quote``, ``memory``,
``alternatives``, ``assumptions`` and ``sources`` (:func:`planner.report.workbook.build_workbook`
writes the Quote first: the Summary refers to its cells);
``cloud`` (with ``cloud_base`` and ``cloud_chart``) adds the "Cloud vs Local" sheet of a
comparison. The shared cell writers and styles are in :mod:`planner.report.cells`.
"""
