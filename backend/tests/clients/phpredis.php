<?php
// phpredis (Debian's php-redis): PORT PATTERN N [HOST], PATTERN one of loop, pipeline, multi.
[$_, $port, $pattern, $n] = $argv;
$host = $argv[4] ?? '127.0.0.1';
$r = new Redis();
$r->connect($host, (int)$port);
switch ($pattern) {
    case 'loop':
        for ($i = 0; $i < $n; $i++) { $r->set("php:$i", $i); }
        break;
    case 'pipeline':
    case 'multi':
        $r->multi($pattern === 'pipeline' ? Redis::PIPELINE : Redis::MULTI);
        for ($i = 0; $i < $n; $i++) { $r->set("php:$i", $i); }
        $r->exec();
        break;
    default:
        fwrite(STDERR, "unknown pattern $pattern\n");
        exit(2);
}
