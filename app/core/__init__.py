"""The shared base that knows nothing of the web: settings, the database and its schema, caps,
backups and the server's private files."""
