# redis-rb (Debian's ruby-redis): PORT PATTERN N [HOST], PATTERN one of loop, pipeline, multi
# (HOST 127.0.0.1 unless given).
# loop: N SETs, each waited for; pipeline: N SETs in `pipelined`; multi: N SETs in `multi`.
require 'redis'
port, pattern, n = ARGV[0].to_i, ARGV[1], ARGV[2].to_i
r = Redis.new(host: ARGV[3] || '127.0.0.1', port: port)
case pattern
when 'loop' then n.times { |i| r.set("rb:#{i}", i) }
when 'pipeline' then r.pipelined { |p| n.times { |i| p.set("rb:#{i}", i) } }
when 'multi' then r.multi { |m| n.times { |i| m.set("rb:#{i}", i) } }
else abort "unknown pattern #{pattern}"
end
