# Drillbook in one container: the web app with its embedded Dask workers, SQLite under /data.
#   docker build -t drillbook . && docker run -p 8000:8000 -v drillbook-data:/data drillbook

# htmx and its SSE extension, exactly as pinned by package-lock.json.
FROM node:20-slim AS vendor
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DRILLBOOK_DATABASE_URL=sqlite:////data/drillbook.sqlite3 \
    DRILLBOOK_DATA_DIR=/data
WORKDIR /srv/drillbook
# torch==2.13.0 from the default index is the large CUDA build; point PIP_EXTRA_INDEX_URL at a
# CPU-only wheel index at build time (--build-arg) for a much smaller image.
ARG PIP_EXTRA_INDEX_URL=""
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml alembic.ini ./
COPY app app
COPY drills drills
COPY migrations migrations
COPY templates templates
COPY static static
COPY scripts scripts
COPY --from=vendor /src/node_modules node_modules
# Run from the source tree (not site-packages): templates, static files and migrations live here.
RUN python scripts/vendor_static.py \
    && rm -rf node_modules \
    && useradd --create-home drillbook \
    && mkdir /data && chown drillbook /data
USER drillbook
VOLUME /data
EXPOSE 8000
CMD ["sh", "-c", "python -m app migrate && exec python -m app serve --host 0.0.0.0 --port 8000"]
