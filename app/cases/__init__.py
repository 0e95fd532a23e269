"""Cases: a hidden cause drawn for a learner, experiments on a budget, a diagnosis and a
verdict, scored and revealed."""
