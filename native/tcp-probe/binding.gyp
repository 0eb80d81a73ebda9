{
  "targets": [
    {
      "target_name": "tcp_probe",
      "sources": ["tcp_probe.c", "syn.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-pthread"],
      "ldflags": ["-pthread"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
