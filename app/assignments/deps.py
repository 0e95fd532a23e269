"""What the assignment pages take from a request's path: an assignment its viewer manages (an
admin, or the instructor of its cohort); any other is answered exactly like a missing one."""

from typing import Annotated

from fastapi import Depends, HTTPException

from app.accounts.models import Cohort
from app.assignments.models import Assignment
from app.web.access import can_manage_cohort
from app.web.deps import CurrentUser, RowId, SessionDep


def managed_assignment(assignment_id: RowId, session: SessionDep, user: CurrentUser) -> Assignment:
    assignment = session.get(Assignment, assignment_id)
    cohort = session.get(Cohort, assignment.cohort_id) if assignment is not None else None
    if assignment is None or cohort is None or not can_manage_cohort(user, cohort):
        raise HTTPException(status_code=404, detail=f"No assignment {assignment_id}.")
    return assignment


AssignmentDep = Annotated[Assignment, Depends(managed_assignment)]
