"""`massgen batch`: many questions through `massgen.api`, resumable, scored, and compared
with single-call and self-consistency baselines at equal token budget.

Modules: `tasks` (reading questions), `scoring` (scorers, intervals), `store` (results.jsonl,
manifest.json), `work` (one job: a team run or a baseline call), `executors` (in-process or
Ray), `runner` (the scheduler and the one writer), `summary` (tables, summary.json, chart),
`cli` (`massgen batch ...`).
"""
