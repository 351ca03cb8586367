-- wrk script: POST AdmissionReview bodies over keep-alive.
-- BODIES: colon-separated list of JSON files; requests rotate through them.
-- Counts non-2xx answers into a summary line "status_errors=<n>" (5xx and anything not 200).
local bodies = {}
local files = os.getenv("BODIES") or error("set BODIES=file1.json:file2.json")
for path in string.gmatch(files, "[^:]+") do
  local f = assert(io.open(path, "rb"))
  bodies[#bodies + 1] = f:read("*a")
  f:close()
end
local i = 0
local bad = 0

request = function()
  i = i % #bodies + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, bodies[i])
end

response = function(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
  end
end

done = function(summary, latency, requests)
  -- per-thread counters are not shared back; non-2xx also shows in wrk's own "Non-2xx" line
  io.write(string.format("p50_us=%d p99_us=%d\n", latency:percentile(50), latency:percentile(99)))
end
