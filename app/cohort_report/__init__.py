"""A cohort's page and its progress CSV. A report: it gathers every feature's results for the
cohort's learners (drills, cases, exercises, review, assignments) on one page, and no feature
reads it. The cohort itself (its code, members, case budget) belongs to accounts."""
