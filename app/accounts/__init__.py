"""People: accounts and credentials, cohorts and their join codes, and the pages for logging in,
registering and administering them."""
