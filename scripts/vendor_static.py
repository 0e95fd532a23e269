"""Copy the pinned front-end files into static/vendor/, and bundle the code editor there.

Every file comes from node_modules, installed by `npm ci` from package-lock.json: htmx, its SSE
extension, and plotly.js's cartesian bundle (line charts with linear or log axes, heat maps,
shapes and annotations: all the live pages draw, at a third of the full bundle's size). The
exercise editor (static/editor/editor.js, ours) is bundled with CodeMirror 6 by esbuild, also
from npm. The outputs are git-ignored; the folder is emptied first so a file no longer vendored
cannot linger.
"""

import json
import shutil
import subprocess
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


# Our entry file -> the bundle's name under static/vendor, and the npm packages inside it.
BUNDLES = {
    "static/editor/editor.js": (
        "editor.min.js",
        ("codemirror", "@codemirror/lang-python", "@codemirror/merge", "esbuild"),
    ),
}


def bundle(entry: str, name: str) -> None:
    """One browser script: ES modules resolved from node_modules, minified, no source map."""
    esbuild = MODULES / ".bin" / "esbuild"
    subprocess.run(
        [
            str(esbuild),
            str(ROOT / entry),
            "--bundle",
            "--minify",
            "--format=iife",
            "--target=es2020",
            "--log-level=warning",
            f"--outfile={VENDOR / name}",
        ],
        check=True,
    )


def npm_version(package: str) -> str:
    manifest = MODULES / package / "package.json"
    return str(json.loads(manifest.read_text())["version"])


def main() -> None:
    shutil.rmtree(VENDOR, ignore_errors=True)
    VENDOR.mkdir(parents=True)
    for package, (source, name) in COPIES.items():
        shutil.copyfile(MODULES / package / source, VENDOR / name)
    for entry, (name, _) in BUNDLES.items():
        bundle(entry, name)
    packages = [*COPIES, *(package for _, inside in BUNDLES.values() for package in inside)]
    versions = {package: npm_version(package) for package in packages}
    (VENDOR / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
    print(f"static/vendor: {versions}")


if __name__ == "__main__":
    main()
