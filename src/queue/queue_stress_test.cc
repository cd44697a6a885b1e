// tests: being written
