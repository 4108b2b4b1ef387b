# Perl's Redis.pm (Debian's libredis-perl): PORT PATTERN N [HOST], PATTERN one of loop, pipeline,
# multi. pipeline: N SETs with callbacks, then wait_all_responses (how Redis.pm pipelines).
use strict;
use warnings;
use Redis;
my ($port, $pattern, $n, $host) = @ARGV;
$host //= '127.0.0.1';
my $r = Redis->new(server => "$host:$port");
if ($pattern eq 'loop') {
    $r->set("pl:$_", $_) for 1 .. $n;
} elsif ($pattern eq 'pipeline') {
    $r->set("pl:$_", $_, sub {}) for 1 .. $n;
    $r->wait_all_responses;
} elsif ($pattern eq 'multi') {
    $r->multi;
    $r->set("pl:$_", $_) for 1 .. $n;
    $r->exec;
} else {
    die "unknown pattern $pattern\n";
}
