"""Every cap on the length of text a person types, in one place.

The models' column lengths, the services' checks, the API schema and the forms' `maxlength`
attributes (templates read `limits.<NAME>`) all come from here, so they cannot drift apart.
"""

from drills.core.seed import MAX_SEED

MAX_PREDICTION = 2000  # the sentence written before a run
MAX_EXPLAIN_BACK = 2000  # each of the four fields of an attempt's explain-back
MAX_SUBMISSION_TEXT = 4000  # each of the four fields of a submission's explanation
MAX_REVIEW_COMMENT = 4000  # a review's comment, and each criterion's comment
MAX_COHORT_NAME = 120
MAX_ASSIGNMENT_TITLE = 120
MAX_DISPLAY_NAME = 120
MAX_JOIN_CODE = 32  # join codes are 8 characters; a little slack for pasted spaces
MAX_ERROR_TEXT = 4000  # why a run or a replay failed (written by the server)
MAX_DIAGNOSIS_TEXT = 1000  # the intervention and the confirming evidence of a case diagnosis
MAX_CASE_KEY = 64  # a case, cause, experiment or fix key
MIN_CASE_BUDGET, MAX_CASE_BUDGET = 1, 10  # experiments a cohort allows per case
MAX_REVIEW_ANSWER = 2000  # what a learner types from memory before seeing a model answer
MAX_REVIEW_PROMPT = 1000  # a review question an instructor writes for their cohort
MAX_REVIEW_MODEL_ANSWER = 4000  # and its model answer
MAX_ITEM_KEY = 160  # a review item's key: "drill-miss:<drill>:<hypothesis>" and the like
MAX_REQUEST_KEY = 64  # a run form's one-time token, or an API client's Idempotency-Key
MAX_SAVED_COMMENT = 1000  # one of an instructor's saved review comments: a paragraph at most
MAX_SAVED_COMMENTS = 50  # saved comments per instructor: a list one can still scan in a select

__all__ = [
    "MAX_CASE_BUDGET",
    "MAX_CASE_KEY",
    "MAX_COHORT_NAME",
    "MAX_DIAGNOSIS_TEXT",
    "MAX_DISPLAY_NAME",
    "MAX_ERROR_TEXT",
    "MAX_EXPLAIN_BACK",
    "MAX_JOIN_CODE",
    "MAX_PREDICTION",
    "MAX_ITEM_KEY",
    "MAX_REVIEW_ANSWER",
    "MAX_REVIEW_COMMENT",
    "MAX_REVIEW_MODEL_ANSWER",
    "MAX_REQUEST_KEY",
    "MAX_REVIEW_PROMPT",
    "MAX_SAVED_COMMENT",
    "MAX_SAVED_COMMENTS",
    "MAX_SEED",
    "MAX_SUBMISSION_TEXT",
    "MIN_CASE_BUDGET",
]
