# syntax=docker/dockerfile:1
# gslbd container image. Build: docker build -t gslbd .   Run: README.md, section "Docker".
FROM node:24-bookworm-slim AS build
WORKDIR /src
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY native native
COPY core core
COPY gitops gitops
COPY cli cli
COPY runtime runtime
COPY schemas schemas
COPY bin bin
# Native modules: better-sqlite3 and bcrypt ship N-API builds; native/ is compiled here (N-API too),
# against the image's own Node headers.
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev

FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git iputils-ping ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/gslbd --create-home gslbd \
 && mkdir -p /etc/gslb && chown gslbd /etc/gslb
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY --from=build /src/native native
COPY --from=build /src/package.json package.json
COPY schemas schemas
COPY webui webui
COPY bin bin
COPY examples examples
# the default configuration: every listener on 0.0.0.0, DNS on 5353 (an unprivileged user cannot
# bind 53; publish it with -p 53:5353/udp -p 53:5353/tcp), the database on the volume
COPY docker/config.yaml /etc/gslb/config.yaml
COPY docker/entrypoint.sh /usr/local/bin/gslbd-entrypoint
USER gslbd
# DNS (UDP and TCP), API, metrics
EXPOSE 5353/udp 5353/tcp 8080/tcp 9090/tcp
VOLUME ["/var/lib/gslbd"]
# the image has no curl: node asks the API's health endpoint, which answers {status: "ok"} once
# every part has started (GSLBD_HEALTH_URL when the API is elsewhere than 127.0.0.1:8080)
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.GSLBD_HEALTH_URL||'http://127.0.0.1:8080/api/v1/health',{signal:AbortSignal.timeout(4000)}).then(r=>r.json()).then(b=>process.exit(b.status==='ok'?0:1),()=>process.exit(1))"]
# refuses to start without GSLB_API_KEY unless GSLBD_DEV=1 (docker/entrypoint.sh)
ENTRYPOINT ["/usr/local/bin/gslbd-entrypoint"]
CMD ["--config", "/etc/gslb/config.yaml"]
