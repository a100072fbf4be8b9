# The reverse proxy in front of web (docker/nginx.conf): Debian's nginx, the one the tests run.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*
COPY docker/nginx.conf /etc/nginx/nginx.conf
EXPOSE 8000
# -p: the temporary files named in nginx.conf live under /var/lib/nginx/, as Debian's do.
CMD ["nginx", "-p", "/var/lib/nginx/", "-c", "/etc/nginx/nginx.conf", "-g", "daemon off; error_log stderr;"]
