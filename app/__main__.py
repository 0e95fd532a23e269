"""`python -m app serve` runs the web app; `python -m app migrate` upgrades the database."""

import argparse
import logging

import uvicorn

from app.config import Settings
from app.migrate import upgrade


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m app")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the web app (starts the embedded workers)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    commands.add_parser("migrate", help="upgrade the database to the newest schema")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = Settings()
    if args.command == "migrate":
        upgrade(settings.database_url)
        return
    from app.main import create_app

    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
