"""A run's life: a request checked and stored as an attempt, its fair place in the queue, the
evidence it streams, its end, replays, comparison and explain-back."""
