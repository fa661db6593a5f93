# Python 3 standard library only; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import hashlib, hmac, json, os, time, urllib.error, urllib.request

def send(method, target, body=b"", headers={}):
    """Signs X-Timestamp + METHOD + request target + raw body, sends those same bytes, returns the JSON."""
    timestamp = str(int(time.time()))
    message = timestamp.encode() + method.encode() + target.encode() + body
    signature = hmac.new(os.environ["PARTNER_API_SECRET"].encode(), message, hashlib.sha256).hexdigest()
    request = urllib.request.Request(os.environ["PARTNER_API_URL"] + target, data=body or None, method=method, headers={
        "X-Api-Key": os.environ["PARTNER_API_KEY"],
        "X-Timestamp": timestamp,
        "X-Signature": signature,
        **({"Content-Type": "application/json"} if body else {}),
        **headers,
    })
    try:
        with urllib.request.urlopen(request) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:  # 4xx or 5xx: the body is an application/problem+json
        raise SystemExit(f"{error.code} {error.read().decode()}")

order_uuid = os.environ["ORDER_UUID"]
body = json.dumps({"amount": 30000000}).encode()
# A retry with the same Idempotency-Key credits nothing again.
order = send("POST", f"/sandbox/v1/orders/{order_uuid}/deposits", body, {"Idempotency-Key": f"deposit-{order_uuid}-1"})
print(json.dumps(order))
