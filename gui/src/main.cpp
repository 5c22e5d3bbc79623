int main() {
  return 0;
}  // local placeholder, not committed (h-gui owns main.cpp)
