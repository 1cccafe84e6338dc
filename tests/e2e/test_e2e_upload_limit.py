"""Issue 38, item 2 in a real browser: a file over the one upload limit (50, server.maxUploadSize and
RAGSCOPE_MAX_UPLOAD_MB alike) is refused on its chip with the number the uploader states, before any upload,
never with Streamlit's "AxiosError: Request failed with status code 413"."""

from __future__ import annotations

from harness import AppPage, start_server


def test_a_file_over_the_limit_is_refused_on_its_chip_with_the_uploaders_number(tmp_path, browser):  # noqa: ANN001 - a playwright Browser
    big = tmp_path / "big.md"
    big.write_bytes(b"# Big\n\n" + b"The ferry leaves at nine. " * (51 * 2**20 // 26))  # 51 MiB
    server = start_server(tmp_path / "data", "upload-limit")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        app = AppPage(context.new_page(), server).open()
        uploader = app.page.get_by_test_id("stFileUploader").first
        shown = uploader.inner_text()
        assert "up to 50.0 MiB each" in shown and "50MB per file" in shown, shown  # one number, label and widget
        uploader.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(big))
        chip = uploader.get_by_test_id("stFileChip").filter(has_text="big.md")
        chip.wait_for()
        app.page.wait_for_timeout(3000)  # an upload, had one started, would have been refused by now
        app.settle()
        app.screenshot("upload-limit")
        said = chip.get_by_role("alert").inner_text()
        assert said == "Error: File must be 50.0MB or smaller.", said
        assert "AxiosError" not in app.page.inner_text("body")
        assert not app.problems()  # nothing reached the app: no preview, no error of its own
    finally:
        context.close()
        server.stop()
