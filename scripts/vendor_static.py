"""Copy the pinned front-end files into static/vendor/ under versioned names.

htmx and its SSE extension come from node_modules (installed by `npm ci` from package-lock.json);
plotly.js comes from the plotly Python package, which bundles it. The copies are git-ignored.
"""

import json
import shutil
from pathlib import Path

import plotly

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "vendor"


def npm_version(package: str) -> str:
    manifest = ROOT / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text())["version"])


def main() -> None:
    VENDOR.mkdir(parents=True, exist_ok=True)
    copies = {
        ROOT / "node_modules/htmx.org/dist/htmx.min.js": "htmx.min.js",
        ROOT / "node_modules/htmx-ext-sse/dist/sse.min.js": "htmx-ext-sse.min.js",
        Path(plotly.__file__).parent / "package_data/plotly.min.js": "plotly.min.js",
    }
    for source, name in copies.items():
        shutil.copyfile(source, VENDOR / name)
    versions = {
        "htmx": npm_version("htmx.org"),
        "htmx-ext-sse": npm_version("htmx-ext-sse"),
        "plotly": plotly.__version__,
    }
    (VENDOR / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
    print(f"static/vendor: {versions}")


if __name__ == "__main__":
    main()
