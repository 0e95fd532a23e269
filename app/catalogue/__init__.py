"""The catalogue of drills and a drill's page, with the links that set up its form."""
