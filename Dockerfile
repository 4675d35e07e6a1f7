# Kiln in a container: a static binary on distroless/static (CA
# certificates, no shell), running as a non-root user.
#
#   docker build -t kiln --build-arg KILN_VERSION=$(git describe --always --dirty) .
#   docker run --rm -p 8420:8420 kiln                     # kiln-tiny, the embedded model
#   docker run --rm -p 8420:8420 -v "$PWD/models:/models:ro" kiln serve --model /models/model.gguf
#
# The build stage runs scripts/build-static, which CI runs too (scripts/test),
# so what CI tests is what the image ships.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG KILN_VERSION=
RUN KILN_VERSION="$KILN_VERSION" ./scripts/build-static /out/kiln

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kiln /kiln
# Listen on every interface inside the container (the server logs a
# warning when it does so without --access-token: set KILN_ACCESS_TOKEN
# unless only trusted clients can reach the port). kiln health derives its
# probe URL from KILN_ADDR, so the health check follows a changed port.
ENV KILN_ADDR=0.0.0.0:8420
EXPOSE 8420
USER nonroot:nonroot
HEALTHCHECK --interval=15s --timeout=6s --start-period=60s --retries=3 \
	CMD ["/kiln", "health", "--quiet"]
ENTRYPOINT ["/kiln"]
CMD ["serve"]
