"""The shared base of every page and API route: dependencies, forms and their errors, error
pages, templates, static files, Markdown, and who may read what."""
