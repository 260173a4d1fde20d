"""History: counters, state changes and findings over time, in a local SQLite database per site.

Sits between the runbooks (which record every check, compliance and watch run) and the validators (whose
Finding and normalized CounterSample it stores). It records what a collection produced, whatever its source
(polling or gNMI): a `Collection` of `{device: CounterSample}`, state observations and findings.

  model.py    Collection / Observation, built from DeviceStates (from_states)
  schema.py   the versioned SQLite schema (docs/history.md)
  store.py    HistoryStore: record, prune, the queries the reports read
  rates.py    increases and rates of cumulative counters across resets and wraps
  report.py   the site report (new/resolved findings, rates, top pause, timeline with the audit log), whole or
              restricted to a job's ports (runbooks.hostlist and runbooks.job find them)
"""
