"""A stock dnspython client for the DNS tests: RFC 2136 UPDATE and AXFR signed with TSIG, exactly as
certbot's RFC 2136 plugin and ACME DNS-01 clients send them (dnspython compresses the TSIG owner
name against the zone name). One JSON argument in, one JSON line out.

  update: {port, zone, key, algorithm, secret, tcp, ops: [[op, name, ttl, value], ...]}
          op "add" adds a TXT value, "delete" deletes one; prints {"rcode": "NOERROR"} or {"error": ...}
  axfr:   {port, zone, key, algorithm, secret}
          prints {"records": [[name, ttl, type, rdata], ...]} or {"error": ...}
"""
import json
import sys

import dns.query
import dns.rcode
import dns.tsigkeyring
import dns.update
import dns.zone


def keyring(a):
    return dns.tsigkeyring.from_text({a["key"]: (a["algorithm"], a["secret"])})


def update(a):
    u = dns.update.UpdateMessage(a["zone"], keyring=keyring(a), keyname=a["key"])
    for op, name, ttl, value in a["ops"]:
        if op == "add":
            u.add(name + ".", ttl, "TXT", value)
        else:
            u.delete(name + ".", "TXT", value)
    send = dns.query.tcp if a.get("tcp", True) else dns.query.udp
    r = send(u, "127.0.0.1", port=a["port"], timeout=10)
    return {"rcode": dns.rcode.to_text(r.rcode())}


def axfr(a):
    xfr = dns.query.xfr("127.0.0.1", a["zone"], port=a["port"], keyring=keyring(a), keyname=a["key"], timeout=10, lifetime=30, relativize=False)
    z = dns.zone.from_xfr(xfr, relativize=False)
    out = []
    for name, ttl, rdata in z.iterate_rdatas():
        out.append([name.to_text(), ttl, dns.rdatatype.to_text(rdata.rdtype), rdata.to_text()])
    return {"records": out}


def main():
    cmd, arg = sys.argv[1], json.loads(sys.argv[2])
    try:
        res = update(arg) if cmd == "update" else axfr(arg)
    except Exception as e:  # the test reads the error text (FORMERR, REFUSED, ...)
        res = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(res))


main()
