# syntax=docker/dockerfile:1
FROM node:20-bookworm-slim AS build
WORKDIR /src
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY native native
COPY controller controller
COPY runtime runtime
COPY schemas schemas
COPY bin bin
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git iputils-ping ca-certificates && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/gslbd --create-home gslbd \
 && mkdir -p /etc/gslb && chown gslbd /etc/gslb
WORKDIR /app
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY --from=build /src/native native
COPY --from=build /src/package.json package.json
COPY schemas schemas
COPY bin bin
COPY examples examples
USER gslbd
# DNS (UDP and TCP), API, metrics
EXPOSE 5353/udp 5353/tcp 8080/tcp 9090/tcp
VOLUME ["/var/lib/gslbd"]
ENTRYPOINT ["node", "bin/gslbd.mjs"]
CMD ["--config", "/etc/gslb/config.yaml"]
