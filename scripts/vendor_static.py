"""Copy the pinned front-end files into static/vendor/ under versioned names.

Every file comes from node_modules, installed by `npm ci` from package-lock.json: htmx, its SSE
extension, and plotly.js's cartesian bundle (line charts with linear or log axes, heat maps,
shapes and annotations: all the live pages draw, at a third of the full bundle's size). The
copies are git-ignored; the folder is emptied first so a file no longer vendored cannot linger.
"""

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "vendor"
MODULES = ROOT / "node_modules"

# npm package -> (file inside it, name under static/vendor)
COPIES = {
    "htmx.org": ("dist/htmx.min.js", "htmx.min.js"),
    "htmx-ext-sse": ("dist/sse.min.js", "htmx-ext-sse.min.js"),
    "plotly.js-cartesian-dist-min": ("plotly-cartesian.min.js", "plotly-cartesian.min.js"),
}


def npm_version(package: str) -> str:
    manifest = MODULES / package / "package.json"
    return str(json.loads(manifest.read_text())["version"])


def main() -> None:
    shutil.rmtree(VENDOR, ignore_errors=True)
    VENDOR.mkdir(parents=True)
    for package, (source, name) in COPIES.items():
        shutil.copyfile(MODULES / package / source, VENDOR / name)
    versions = {package: npm_version(package) for package in COPIES}
    (VENDOR / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
    print(f"static/vendor: {versions}")


if __name__ == "__main__":
    main()
