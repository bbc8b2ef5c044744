#!/usr/bin/env bash
# ocr-deps.sh: the OCR tools that docindex/images uses and tests.
#
# Installs tesseract-ocr with its English model (tesseract-ocr-eng): the offline image describer
# of docindex/images runs the tesseract CLI, and the service uses it by default when it is on
# PATH, so scanned PDFs become searchable without a vision model. Also makes sure of
# poppler-utils (pdftoppm, pdfimages render pages and pull images out of PDFs).
# Idempotent: a second run checks the binaries and exits silently. Runs as root (apt-get).
set -euo pipefail

die() { echo "ocr-deps: error: $*" >&2; exit 1; }

need=()
command -v tesseract >/dev/null 2>&1 || need+=(tesseract-ocr)
# The English model is a separate package; tesseract without it fails on every image.
tesseract --list-langs 2>/dev/null | grep -qx eng || need+=(tesseract-ocr-eng)
command -v pdftoppm >/dev/null 2>&1 && command -v pdfimages >/dev/null 2>&1 || need+=(poppler-utils)
[ ${#need[@]} -eq 0 ] && exit 0

[ "$(id -u)" = 0 ] || die "missing ${need[*]}; run this script as root, or: apt-get install ${need[*]}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first: a fresh machine may hold lists already.
if ! apt-get install -y --no-install-recommends "${need[@]}" >"$log" 2>&1; then
  apt-get update >>"$log" 2>&1 || { tail -n 15 "$log" >&2; die "apt-get update failed"; }
  apt-get install -y --no-install-recommends "${need[@]}" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "could not install ${need[*]}"; }
fi
command -v tesseract >/dev/null 2>&1 || die "tesseract-ocr installed but tesseract is not on PATH"
tesseract --list-langs 2>/dev/null | grep -qx eng || die "tesseract has no English model (tesseract-ocr-eng)"
command -v pdftoppm >/dev/null 2>&1 || die "poppler-utils installed but pdftoppm is not on PATH"
