"""The availability profile's running jobs by expected end, kept through starts, ends and changed ends."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.profile import AvailabilityProfile

NB_MACHINES = 16

steps = st.lists(st.tuples(st.sampled_from(["start", "finish", "move"]), st.integers(0, 7),
                           st.sampled_from([0.0, 5.0, 10.0, 10.0, 20.0, 35.5])), max_size=40)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_running_jobs_stay_ordered_by_expected_end(operations: list[tuple[str, int, float]]) -> None:
    profile = AvailabilityProfile(NB_MACHINES)
    for operation, number, end in operations:
        job_id = f"w0!{number}"
        if operation == "start" and job_id not in profile.running and profile.nb_free:
            profile.start(job_id, 0.0, end, 1, profile.fits_now(1, end, 0.0))
        elif operation == "finish" and job_id in profile.running:
            profile.finish(job_id)
        elif operation == "move" and job_id in profile.running:
            profile.set_expected_end(job_id, end)
        by_end = profile._by_end
        assert sorted(map(id, by_end)) == sorted(map(id, profile.running.values()))
        assert [holding.end for holding in by_end] == sorted(holding.end for holding in profile.running.values())
