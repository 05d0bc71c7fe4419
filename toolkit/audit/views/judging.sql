-- judging(snapshot_id): whether a row's snapshot is one the check is judging now. The judge
-- names the snapshots a check judges in the variable audit_judged_ids (toolkit/audit/
-- judge.py), so a view that a `history: all` check reads computes its rows for those
-- snapshots alone and reads the rest of the history for what the past holds (a streak's
-- start, a first sighting, the snapshot a key is compared with). Unset (a fixture's
-- run_check, a notebook, `sql`), every snapshot is judged. The judge still refuses rows of
-- a snapshot it did not read: this filters the views' table rows, whose snapshots are the
-- committed ones, never the check's output.
create or replace macro judging(snapshot) as
    getvariable('audit_judged_ids') is null
    or list_contains(getvariable('audit_judged_ids'), snapshot)
