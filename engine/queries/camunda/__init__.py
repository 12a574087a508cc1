"""Read SQL for the Camunda-compatible REST surface, one module per resource as in app/camunda/:
list queries with Camunda's filters, sorting and paging, and the few joins its DTOs need
(activity instance ids, version tags, scopes).

Every function is a plain committed read. Filters left as None do not apply. `sort` names are
Camunda's `sortBy` values; unknown names are refused by the caller before they get here.
"""
