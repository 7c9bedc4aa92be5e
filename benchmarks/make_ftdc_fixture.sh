#!/bin/sh
# Regenerate tests/fixtures/ftdc_sample_reference.jsonl.gz: every value of the bundled FTDC sample
# (data/ftdc_sample/diagnostic.data) as the independent Go decoder in ../shared/tools/ftdc-reference reads it
# (ftdcdump -mode jsonl), behind a header line naming this command and the sha256 of each FTDC file it read.
# tests/observe/test_ftdc_reference.py compares capmodel's reader with it, value by value, without needing Go.
#
#     sh benchmarks/make_ftdc_fixture.sh          (from the repository root; needs `go`)
#
# Re-run it whenever data/ftdc_sample is regenerated (scripts/make_ftdc_sample.py): the test refuses a fixture whose
# sha256 no longer matches the sample.
set -eu
cd "$(dirname "$0")/.."
SOURCE="${FTDC_REFERENCE_SOURCE:-../shared/tools/ftdc-reference}"
SAMPLE=data/ftdc_sample/diagnostic.data
OUT=tests/fixtures/ftdc_sample_reference.jsonl.gz
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
(cd "$SOURCE" && go build -o "$BUILD/ftdcdump" .)
{
    printf '{"kind": "header", "command": "sh benchmarks/make_ftdc_fixture.sh", '
    printf '"decoder": "ftdcdump -mode jsonl %s (Go, %s)", "sha256": {' "$SAMPLE" "$SOURCE"
    first=1
    for f in "$SAMPLE"/metrics.*; do
        [ "$first" = 1 ] || printf ', '
        first=0
        printf '"%s": "%s"' "$(basename "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
    done
    printf '}}\n'
    "$BUILD/ftdcdump" -mode jsonl "$SAMPLE"
} | gzip -9n > "$OUT"
echo "wrote $OUT"
