from bench.engine_throughput import main

main()
