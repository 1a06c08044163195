FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    CHROMIUM_PATH=/usr/bin/chromium \
    MANGALORD_DATA_DIR=/data

RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium libgl1 libglib2.0-0 \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The runtime set only: no test, lint or benchmark tools in the image.
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# The project's bytecode, compiled once into the image: PYTHONDONTWRITEBYTECODE keeps a container from writing
# it, so without this every process (each cron-started crawl worker too) compiles our modules again at start.
RUN python -m compileall -q /app
# A throw-away key for the build step, so no key file is baked into /data.
RUN SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" python manage.py collectstatic --noinput

VOLUME ["/data"]
EXPOSE 8000
# Web server (Granian, one worker process a core: `--workers N`, docs/serving.md); run workers from the same image with
# `python manage.py crawl_worker` / `python manage.py analyze_worker`.
CMD ["sh", "-c", "python manage.py migrate --noinput && exec python manage.py serve --addr 0.0.0.0 --port 8000"]
