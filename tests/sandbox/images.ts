/** Local images built by scripts/images/ (scripts/test runs the builders before the tests). */
export const BUSYBOX = "stn-test/busybox:latest";
export const PYTHON = "stn/python:3.11-local";
/** PYTHON plus one installed distribution, stn-fixture (scripts/images/python_pkgs). */
export const PYTHON_PKGS = "stn-test/python-pkgs:latest";
