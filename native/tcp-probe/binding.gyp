{
  "targets": [
    {
      "target_name": "tcp_probe",
      "sources": ["tcp_probe.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
