# Drillbook's one image. Alone, it is the whole app in one container (the web app with its
# embedded Dask workers, SQLite under /data):
#   docker build -t drillbook . && docker run -p 8000:8000 -v drillbook-data:/data drillbook
# deploy/compose.yaml runs every service of a scale-out set-up from it (web processes, the Dask
# scheduler, workers), each with its own `python -m app <command>`.

# htmx, its SSE extension, plotly.js and CodeMirror with esbuild, as pinned by package-lock.json.
FROM node:20-slim AS vendor
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONPATH=/srv/drillbook \
    DRILLBOOK_DATABASE_URL=sqlite:////data/drillbook.sqlite3 \
    DRILLBOOK_DATA_DIR=/data
WORKDIR /srv/drillbook
# Learners' code runs under bubblewrap with a seccomp filter (drills/sandbox); the container must
# allow unprivileged user namespaces for it (else the app says code exercises are off).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/*
# torch from the CPU-only wheel index (PyPI's torch==2.13.0 for Linux pulls several GB of CUDA
# libraries), without its dependencies: requirements.lock pins those, and every other package.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
COPY requirements.lock ./
RUN pip install --no-cache-dir --no-deps --index-url "$TORCH_INDEX_URL" torch==2.13.0 \
    && pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml alembic.ini ./
COPY app app
COPY drills drills
COPY migrations migrations
COPY templates templates
COPY static static
COPY scripts scripts
COPY --from=vendor /src/node_modules node_modules
# Run from the source tree (PYTHONPATH): templates, static files and migrations live here.
# /certs and /data belong to the app's user, so the named volumes mounted there do too.
RUN python scripts/vendor_static.py \
    && rm -rf node_modules \
    && useradd --create-home drillbook \
    && mkdir /certs /data && chown drillbook /certs /data
USER drillbook
VOLUME /data
EXPOSE 8000
CMD ["sh", "-c", "python -m app migrate && exec python -m app serve --host 0.0.0.0 --port 8000"]
