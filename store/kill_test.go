package store

const helperEnv = "STORE_TEST_APPENDER"

func appenderProcess() int { return 0 }
