/** Local images built by scripts/images/ (scripts/test runs the builders before the tests). */
export const BUSYBOX = "stn-test/busybox:latest";
export const PYTHON = "stn/python:3.11-local";
