"""Portfolio export: xAPI-like statements, signed JSON, a self-contained HTML page, and a zip."""
