// Loaded by every notebook page in place of MathJax (docs/mkdocs.yml,
// custom_mathjax_url): the notebooks write their formulas in Unicode, so
// nothing needs typesetting, and the site makes no request off this machine.
